// J48 -R -N K -Q S as Weka ran it before 3.9.7, on Weka 3.9.7's own classes, for
// tests/ektesting/weka_tools.py (j48_reduced_error).
//
// Weka 3.9.7's J48 -R stops with "Model selection method not implemented": its
// C45ModelSelection.selectModel(train, pruningSet) calls the base class's version, which
// throws, where 3.8 chose the split from the training part alone. This program builds what
// J48.buildClassifier builds for -R (a C45ModelSelection over all the training data with
// J48's defaults -M 2, MDL correction, split points moved to data values, and a
// PruneableClassifierTree with K folds and seed S), through a ModelSelection that answers
// that one call as 3.8 did. Everything else (stratification, folds, shuffling, growing,
// pruning, printing, distributions) is Weka 3.9.7's.
//
// Usage: java -cp weka.jar J48ReducedErrorPruning.java TRAIN.arff TEST.arff K:S [K:S ...]
// Prints, for each K:S, "tree K S", the tree as J48 prints it below its "----" line, the
// line "distributions", one line per TEST row with its class distribution (Java's
// shortest round-trip form of each double, separated by spaces), and "end".

import weka.classifiers.trees.j48.C45ModelSelection;
import weka.classifiers.trees.j48.ClassifierSplitModel;
import weka.classifiers.trees.j48.ModelSelection;
import weka.classifiers.trees.j48.PruneableClassifierTree;
import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;

public class J48ReducedErrorPruning {

    /** Chooses splits with C45ModelSelection, from the training part only (Weka 3.8). */
    static final class TrainingPartOnly extends ModelSelection {
        private final C45ModelSelection inner;

        TrainingPartOnly(C45ModelSelection inner) {
            this.inner = inner;
        }

        @Override
        public ClassifierSplitModel selectModel(Instances data) throws Exception {
            return inner.selectModel(data);
        }

        @Override
        public ClassifierSplitModel selectModel(Instances train, Instances pruning)
                throws Exception {
            return inner.selectModel(train);
        }

        @Override
        public String getRevision() {
            return inner.getRevision();
        }
    }

    public static void main(String[] args) throws Exception {
        Instances train = DataSource.read(args[0]);
        train.setClassIndex(train.numAttributes() - 1);
        Instances test = DataSource.read(args[1]);
        test.setClassIndex(test.numAttributes() - 1);
        StringBuilder out = new StringBuilder();
        for (int a = 2; a < args.length; a++) {
            String[] setting = args[a].split(":");
            int folds = Integer.parseInt(setting[0]);
            int seed = Integer.parseInt(setting[1]);
            C45ModelSelection selection = new C45ModelSelection(2, train, true, false);
            PruneableClassifierTree tree = new PruneableClassifierTree(
                new TrainingPartOnly(selection), true, folds, true, seed);
            tree.buildClassifier(train);
            selection.cleanup();
            out.append("tree ").append(folds).append(' ').append(seed).append('\n');
            out.append(tree.toString()).append('\n');
            out.append("distributions\n");
            for (int i = 0; i < test.numInstances(); i++) {
                double[] dist = tree.distributionForInstance(test.instance(i), false);
                for (int c = 0; c < dist.length; c++) {
                    out.append(c == 0 ? "" : " ").append(Double.toString(dist[c]));
                }
                out.append('\n');
            }
            out.append("end\n");
        }
        System.out.print(out);
    }
}
